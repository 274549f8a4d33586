"""What disklab tests: a directory, a file or a block device, and the rules that keep data safe."""
