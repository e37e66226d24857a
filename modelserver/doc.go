// Package modelserver knows the model servers people run on their own
// computer for the bundled Planner (Ollama, llama.cpp's llama-server, LM
// Studio, vLLM): their usual addresses, how to start each, and which of
// them answer, with what models. It asks loopback addresses only, never
// through a proxy and never following a redirect, each within a short
// time and reading a bounded answer; it never sends a credential. A leaf
// library: it imports nothing of Chopin's.
package modelserver
