// Negotiation: see README.md in this folder.
