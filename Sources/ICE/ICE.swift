// ICE: see README.md in this folder.
