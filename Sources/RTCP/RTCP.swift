// RTCP: see README.md in this folder.
