#ifndef CHEAPINFO_H
#define CHEAPINFO_H

#include <stddef.h>

/// Bytes the process has in use on the heap: malloc'd chunks in every arena plus mmapped
/// ones (glibc's mallinfo2 `uordblks + hblkhd`); 0 where mallinfo2 is not available.
size_t cheapinfo_heap_in_use(void);

#endif
