#include "gs_eventfd.h"

#include <sys/eventfd.h>

int gs_eventfd(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}
