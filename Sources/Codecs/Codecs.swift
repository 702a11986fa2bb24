// Codecs: see README.md in this folder.
