package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/image/webp"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// storeTestImage keeps a real w×h PNG, half see-through, as one of the
// document's images, the way a turn's tool result or upload_plan_image
// will, and returns what was stored.
func storeTestImage(t *testing.T, ta *testApp, channelID string, w, h int) picture.Image {
	t.Helper()
	pic := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if x < w/2 {
				a = 0
			}
			pic.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), 200, a})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, pic); err != nil {
		t.Fatal(err)
	}
	img, err := room.PrepareUpload(room.UploadImageArgs{
		Data: base64.StdEncoding.EncodeToString(buf.Bytes()), MimeType: "image/png", Alt: "a test picture",
	}, ta.app.cfg.MaxStoredImageBytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := ta.app.Store().SaveImage(context.Background(), channelID, store.Image{SHA256: img.SHA256, Ext: img.Ext,
		MimeType: img.MimeType, Width: img.Width, Height: img.Height, Data: img.Data}); err != nil {
		t.Fatal(err)
	}
	return img
}

func TestImageServed(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Images")
	img := storeTestImage(t, ta, doc.ID, 800, 400)

	r := ta.Do("GET", room.ImagePath(img), nil)
	apptest.Want(t, r, 200, "")
	for k, v := range map[string]string{
		"Content-Type":                 "image/png",
		"X-Content-Type-Options":       "nosniff",
		"Content-Security-Policy":      "sandbox; default-src 'none'",
		"Cache-Control":                "private, max-age=31536000, immutable",
		"Cross-Origin-Resource-Policy": "same-origin",
		"Etag":                         `"` + img.SHA256 + `"`,
	} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if !bytes.Equal(r.Body, img.Data) {
		t.Fatal("served bytes differ from the stored ones")
	}
	r = ta.Request(ta.Browser, "GET", room.ImagePath(img), nil, map[string]string{"If-None-Match": `"` + img.SHA256 + `"`})
	apptest.Want(t, r, 304, "")

	// The agent token reads it too; a stranger does not.
	ta.app.agentToken.mu.RLock()
	token := ta.app.agentToken.value
	ta.app.agentToken.mu.RUnlock()
	apptest.Want(t, ta.Request(http.DefaultClient, "GET", room.ImagePath(img), nil, map[string]string{"Authorization": "Bearer " + token}), 200, "")
	if r := ta.Request(http.DefaultClient, "GET", room.ImagePath(img), nil, nil); r.Status != 401 || bytes.Contains(r.Body, img.Data[:16]) {
		t.Fatalf("without a session: %d", r.Status)
	}
	apptest.Want(t, ta.Request(http.DefaultClient, "GET", room.ImagePath(img), nil, map[string]string{"Authorization": "Bearer chopin_a_wrong"}), 401, "")

	// Unknown hash, another extension, a malformed name: 404.
	for _, p := range []string{
		"/images/" + strings.Repeat("0", 64) + ".png",
		"/images/" + img.SHA256 + ".jpg",
		"/images/" + img.SHA256 + ".svg",
		"/images/" + img.SHA256,
		"/images/" + strings.ToUpper(img.SHA256) + ".png",
		"/images/../api/session",
	} {
		if r := ta.Do("GET", p, nil); r.Status != 404 {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
	apptest.Want(t, ta.Do("GET", "/images/"+strings.Repeat("0", 64)+".png", nil), 404, "image-not-found")
}

func TestImageThumbnail(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Thumbnails")
	img := storeTestImage(t, ta, doc.ID, 800, 400)

	for range 2 { // made, then from the cache
		r := ta.Do("GET", room.ImagePath(img)+"?w=360", nil)
		apptest.Want(t, r, 200, "")
		if ct := r.Header.Get("Content-Type"); ct != "image/webp" || r.Header.Get("X-Content-Type-Options") != "nosniff" ||
			r.Header.Get("Content-Security-Policy") != imageCSP || r.Header.Get("Etag") != `"`+img.SHA256+`-w360"` {
			t.Fatalf("thumbnail headers %v", r.Header)
		}
		dec, err := webp.Decode(bytes.NewReader(r.Body))
		if err != nil || dec.Bounds().Dx() != 360 || dec.Bounds().Dy() != 180 {
			t.Fatalf("thumbnail %v, %v", dec.Bounds(), err)
		}
		if _, _, _, a := dec.At(10, 10).RGBA(); a != 0 {
			t.Fatal("thumbnail lost transparency")
		}
	}
	// Wider than the image: the image itself.
	r := ta.Do("GET", room.ImagePath(img)+"?w=960", nil)
	apptest.Want(t, r, 200, "")
	if r.Header.Get("Content-Type") != "image/png" || !bytes.Equal(r.Body, img.Data) {
		t.Fatalf("?w=960 of an 800-wide image: %s", r.Header.Get("Content-Type"))
	}
	apptest.Want(t, ta.Do("GET", room.ImagePath(img)+"?w=333", nil), 400, "invalid-width")
	apptest.Want(t, ta.Do("GET", room.ImagePath(img)+"?w=big", nil), 400, "invalid-width")
}

func TestImageOfDeletedDocument(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Gone")
	img := storeTestImage(t, ta, doc.ID, 20, 10)
	apptest.Want(t, ta.Do("GET", room.ImagePath(img), nil), 200, "")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+doc.ID+"/archive", nil), 200, "")
	apptest.Want(t, ta.Do("GET", room.ImagePath(img), nil), 200, "") // an archived document is still read
	apptest.Want(t, ta.Do("DELETE", "/api/channels/"+doc.ID, nil), 204, "")
	apptest.Want(t, ta.Do("GET", room.ImagePath(img), nil), 404, "image-not-found")
}
