package agentconn

// SetMaxQueue lowers the send queue bound so a test can fill it.
func SetMaxQueue(s *Server, n int) { s.maxQueue = n }
