package jdbc

import "context"

// PoolSetting is the value of a run-time setting on a connection of s's
// pool (with MaxConns 1: the one every batch used).
func PoolSetting(s *Store, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}
