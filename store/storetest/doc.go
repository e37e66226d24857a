// Package storetest damages a Chopin database file the way a failing disk
// or another program would, for the tests of store and of the app that
// check Chopin finds the damage, says so and loses nothing more. It is for
// tests only, and imports nothing of Chopin's.
package storetest
