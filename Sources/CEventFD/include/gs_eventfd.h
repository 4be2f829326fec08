#ifndef GS_EVENTFD_H
#define GS_EVENTFD_H

/// eventfd(2), close-on-exec and non-blocking, which the Glibc module does
/// not import (<sys/eventfd.h>). Returns the descriptor, or -1 with errno set.
int gs_eventfd(void);

#endif
