#ifndef COpus_SHIM_H
#define COpus_SHIM_H
#include <opus/opus.h>
#endif
