// Package picturetest makes the images the tests of picture, room and the
// app read: real pictures of every type picture accepts, encoded by real
// encoders, so a test never depends on files it cannot regenerate. It is for
// tests only, and imports nothing of Chopin's.
package picturetest
