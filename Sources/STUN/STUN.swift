// STUN: see README.md in this folder.
