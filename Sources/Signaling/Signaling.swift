// Signaling: see README.md in this folder.
