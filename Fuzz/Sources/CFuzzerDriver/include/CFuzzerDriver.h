// libFuzzer's driver entry point (LLVM ≥ 13): runs the fuzzer with a callback instead of the
// global LLVMFuzzerTestOneInput, from a `main` of the program's own. SwiftPM names an
// executable's entry point after its module and links it as `main`, so each target starts
// libFuzzer through this.
#pragma once
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
