"""What every layer asks of the operating system: this host's identity, living processes, user files read safely."""
