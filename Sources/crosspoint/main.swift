Crosspoint.run(Array(CommandLine.arguments.dropFirst()))
