#ifndef SWIFTLET_CUSRSCTP_SHIM_H
#define SWIFTLET_CUSRSCTP_SHIM_H

/* Debian's libusrsctp-dev 0.9.5 (pkg-config `usrsctp`, which adds
 * -DINET -DINET6). Swift code does not call it directly: CSCTPShim wraps
 * the socket options, the variadic debug hook and the by-value callbacks. */
#include <usrsctp.h>

#endif
