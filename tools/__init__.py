"""The client tools: pminfo, pmval, pmstore, pmprobe (each a module with a main())."""
