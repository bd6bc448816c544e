from nanoframes.cli import main

raise SystemExit(main())
