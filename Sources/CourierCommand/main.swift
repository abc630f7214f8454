#if CommandLine
import CourierCLI

await CourierCommandLine.main()
#else
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The command's dependencies come with the `CommandLine` trait.
fputs("courier: built without the CommandLine trait; run it with `swift run --traits CommandLine courier`\n", stderr)
exit(2)
#endif
