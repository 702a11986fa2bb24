// Placeholder until the first real type lands.
