// RTPStreams: see README.md in this folder.
