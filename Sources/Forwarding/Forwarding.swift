// Forwarding: see README.md in this folder.
