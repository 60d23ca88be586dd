from kubectl_terminating.cli import main

main()
