#if CommandLine
import CourierCLI

await CourierCommandLine.main()
#else
import Foundation

// The command's dependencies come with the `CommandLine` trait.
FileHandle.standardError.write(
    Data("courier: built without the CommandLine trait; run it with `swift run --traits CommandLine courier`\n".utf8)
)
exit(2)
#endif
