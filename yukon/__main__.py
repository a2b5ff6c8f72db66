from yukon.cli import main

raise SystemExit(main())
