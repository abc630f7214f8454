// The declaration is in the header; libFuzzer (linked by -sanitize=fuzzer) defines it.
#include "CFuzzerDriver.h"
