// The wrappers are inline in the header; this file gives the target a translation unit.
#include "CSwiftLoopCurl.h"
