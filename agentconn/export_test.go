package agentconn

// SetMaxQueue lowers the send queue bound so a test can fill it.
func SetMaxQueue(s *Server, n int) { s.maxQueue = n }

// OpenLinks counts the links whose socket is still open.
func OpenLinks(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.links)
}
