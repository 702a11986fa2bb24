// SDP: see README.md in this folder.
