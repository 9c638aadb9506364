Crosspoint.main()
