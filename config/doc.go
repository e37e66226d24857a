// Package config is Chopin's configuration: the settings table (every
// setting's flag, environment variable, chopin.toml key, range and default),
// the loader that resolves them by precedence and reports every problem at
// once, chopin.toml with its [[repository]] and [[acp_agent]] tables, and
// what --help says of them. It reads and checks; it creates nothing and
// imports nothing of Chopin's but the rules for names.
package config
