// DTLS: see README.md in this folder.
