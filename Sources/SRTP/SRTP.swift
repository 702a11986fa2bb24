// SRTP: see README.md in this folder.
