from disklab.cli.main import main

main()
