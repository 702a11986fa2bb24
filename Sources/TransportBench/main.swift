// Transport benchmark: see Scripts/bench-transport.
print("not written yet")
