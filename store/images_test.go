package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
)

func testImage(data []byte) Image {
	sum := sha256.Sum256(data)
	return Image{SHA256: hex.EncodeToString(sum[:]), Ext: "png", MimeType: "image/png", Width: 3, Height: 2, Data: data}
}

func TestImages(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := mustRepo(t, s, "octo/plans")
	a := mustChannel(t, s, r.NodeID, "A")
	b := mustChannel(t, s, r.NodeID, "B")
	img := testImage([]byte("\x89PNG not really, but the store does not look"))

	// The same bytes twice are one row, with the first save's time.
	if err := s.SaveImage(ctx, a.ID, img); err != nil {
		t.Fatal(err)
	}
	first, err := s.Image(ctx, a.ID, img.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveImage(ctx, a.ID, img); err != nil {
		t.Fatal(err)
	}
	again, err := s.Image(ctx, a.ID, img.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	if again.CreatedAt != first.CreatedAt || !bytes.Equal(again.Data, img.Data) ||
		again.Ext != "png" || again.MimeType != "image/png" || again.Width != 3 || again.Height != 2 {
		t.Fatalf("image after a second save: %+v, first %+v", again, first)
	}
	var n int
	s.read.QueryRow(`SELECT count(*) FROM images`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d rows after saving the same bytes twice", n)
	}

	// Another document has the image only once it saves it too.
	if _, err := s.Image(ctx, b.ID, img.SHA256); errCode(err) != "image-not-found" || !errors.Is(err, ErrNotFound) {
		t.Fatalf("another document's image: %v", err)
	}
	_, holders, err := s.ImageByHash(ctx, img.SHA256)
	if err != nil || len(holders) != 1 || holders[0] != a.ID {
		t.Fatalf("holders %v, %v", holders, err)
	}
	if err := s.SaveImage(ctx, b.ID, img); err != nil {
		t.Fatal(err)
	}
	got, holders, err := s.ImageByHash(ctx, img.SHA256)
	if err != nil || len(holders) != 2 || holders[0] != a.ID || holders[1] != b.ID || !bytes.Equal(got.Data, img.Data) {
		t.Fatalf("holders %v, %v", holders, err)
	}

	// Deleting a document deletes its images; the other keeps its own.
	if _, _, err := s.ArchiveChannel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChannel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, holders, err = s.ImageByHash(ctx, img.SHA256); err != nil || len(holders) != 1 || holders[0] != b.ID {
		t.Fatalf("after delete: holders %v, %v", holders, err)
	}
	if _, _, err := s.ArchiveChannel(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteChannel(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ImageByHash(ctx, img.SHA256); errCode(err) != "image-not-found" {
		t.Fatalf("an image no document holds: %v", err)
	}
}

func TestSaveImageRefuses(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	r := mustRepo(t, s, "octo/plans")
	ch := mustChannel(t, s, r.NodeID, "A")
	img := testImage([]byte("bytes"))

	wrong := img
	wrong.SHA256 = hex.EncodeToString(make([]byte, 32))
	if err := s.SaveImage(ctx, ch.ID, wrong); errCode(err) != "image-hash-mismatch" {
		t.Fatalf("bytes under another hash: %v", err)
	}
	if err := s.SaveImage(ctx, "5f0c8c7e-2b1d-4a43-9c1e-7d1a2b3c4d5e", img); errCode(err) != "channel-not-found" {
		t.Fatalf("unknown document: %v", err)
	}
	// The schema itself never holds a type Chopin does not serve.
	svg := img
	svg.Ext, svg.MimeType = "svg", "image/svg+xml"
	if err := s.SaveImage(ctx, ch.ID, svg); err == nil {
		t.Fatal("saved an SVG")
	}
}
