from hookproof.cli import main

main()
