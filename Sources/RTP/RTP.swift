// RTP: see README.md in this folder.
