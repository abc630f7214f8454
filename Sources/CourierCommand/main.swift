import CourierCLI

await CourierCommandLine.main()
