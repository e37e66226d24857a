package room

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/picture/picturetest"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// result is a tool result holding blocks.
func result(t testing.TB, blocks ...map[string]any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"content": blocks})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

const tenMiB = 10 << 20

func TestReadToolResultTypes(t *testing.T) {
	small := picturetest.Gradient(40, 30, true)
	pngBytes := picturetest.PNG(t, small)
	for _, tc := range []struct {
		name, mimeType string
		data           []byte
		ext, mime      string
		w, h           int
	}{
		{"png", "image/png", pngBytes, "png", "image/png", 40, 30},
		{"apng name", "image/apng", pngBytes, "png", "image/png", 40, 30},
		{"case and parameters", "Image/PNG; charset=binary", pngBytes, "png", "image/png", 40, 30},
		{"jpeg", "image/jpeg", picturetest.JPEG(t, small, 90), "jpg", "image/jpeg", 40, 30},
		{"jpg name", "image/jpg", picturetest.JPEG(t, small, 90), "jpg", "image/jpeg", 40, 30},
		{"jpeg turned by EXIF", "image/jpeg", picturetest.WithOrientation(picturetest.JPEG(t, small, 90), 6), "jpg", "image/jpeg", 30, 40},
		{"gif", "image/gif", picturetest.GIF(t, small), "gif", "image/gif", 40, 30},
		{"webp", "image/webp", picturetest.WebP(t, small), "webp", "image/webp", 40, 30},
		{"bmp", "image/bmp", picturetest.BMP(t, small), "bmp", "image/bmp", 40, 30},
		{"x-ms-bmp name", "image/x-ms-bmp", picturetest.BMP(t, small), "bmp", "image/bmp", 40, 30},
		{"ico", "image/x-icon", picturetest.ICO(pngBytes, 40, 30), "ico", "image/x-icon", 40, 30},
		{"ico of 256", "image/vnd.microsoft.icon", picturetest.ICO(picturetest.PNG(t, picturetest.Gradient(256, 256, false)), 0, 0), "ico", "image/x-icon", 256, 256},
		{"avif", "image/avif", picturetest.AVIF(1920, 1080), "avif", "image/avif", 1920, 1080},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alt, caption := "a gradient", ""
			content, ok := ReadToolResult(result(t,
				map[string]any{"type": "text", "text": "made it"},
				map[string]any{"type": "image", "data": b64(tc.data), "mimeType": tc.mimeType, "alt": alt, "caption": caption, "extra": 1},
			), tenMiB)
			if !ok || len(content.Images) != 1 || len(content.Text) != 1 || content.Text[0] != "made it" {
				t.Fatalf("content %+v, ok %v", content, ok)
			}
			ti := content.Images[0]
			if ti.Refused != nil {
				t.Fatalf("refused: %s", ti.Refused.Reason)
			}
			img := ti.Image
			if img.Ext != tc.ext || img.MimeType != tc.mime || img.Width != tc.w || img.Height != tc.h {
				t.Fatalf("got %s %s %d×%d, want %s %s %d×%d", img.Ext, img.MimeType, img.Width, img.Height, tc.ext, tc.mime, tc.w, tc.h)
			}
			if !bytes.Equal(img.Data, tc.data) {
				t.Fatal("a small image was not stored as its own bytes")
			}
			if ti.Alt == nil || *ti.Alt != alt || ti.Caption == nil || *ti.Caption != "" {
				t.Fatalf("alt %v caption %v", ti.Alt, ti.Caption)
			}
			if ImagePath(img) != "/images/"+img.SHA256+"."+tc.ext || len(img.SHA256) != 64 {
				t.Fatalf("path %s", ImagePath(img))
			}
		})
	}
}

func TestReadToolResultRefusals(t *testing.T) {
	pngBytes := picturetest.PNG(t, picturetest.Gradient(40, 30, true))
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	for _, tc := range []struct {
		name   string
		block  map[string]any
		code   string
		reason string
	}{
		{"svg", map[string]any{"type": "image", "data": b64(svg), "mimeType": "image/svg+xml"},
			RefusedUnsupportedType, "Image couldn't be shown: its type, image/svg+xml, is not one Chat shows."},
		{"html", map[string]any{"type": "image", "data": b64([]byte("<html>")), "mimeType": "text/html"},
			RefusedUnsupportedType, "Image couldn't be shown: its type, text/html, is not one Chat shows."},
		{"svg bytes named png", map[string]any{"type": "image", "data": b64(svg), "mimeType": "image/png"},
			RefusedWrongBytes, "Image couldn't be shown: its bytes are not a PNG image."},
		{"png bytes named jpeg", map[string]any{"type": "image", "data": b64(pngBytes), "mimeType": "image/jpeg"},
			RefusedWrongBytes, "Image couldn't be shown: its bytes are a PNG image, not a JPEG."},
		{"png cut short", map[string]any{"type": "image", "data": b64(pngBytes[:len(pngBytes)/2]), "mimeType": "image/png"},
			RefusedWrongBytes, "Image couldn't be shown: its bytes are cut short, not a whole PNG image."},
		{"png header only", map[string]any{"type": "image", "data": b64(pngBytes[:20]), "mimeType": "image/png"},
			RefusedWrongBytes, "Image couldn't be shown: its bytes are cut short, not a whole PNG image."},
		{"not base64", map[string]any{"type": "image", "data": "not*base64!", "mimeType": "image/png"},
			RefusedNotBase64, "Image couldn't be shown: its data is not base64."},
		{"url-safe base64", map[string]any{"type": "image", "data": "__--", "mimeType": "image/png"},
			RefusedNotBase64, "Image couldn't be shown: its data is not base64."},
		{"no data", map[string]any{"type": "image", "mimeType": "image/png"},
			RefusedNoData, "Image couldn't be shown: its block has no data or type."},
		{"empty data", map[string]any{"type": "image", "data": "", "mimeType": "image/png"},
			RefusedNoData, "Image couldn't be shown: its block has no data or type."},
		{"no type", map[string]any{"type": "image", "data": b64(pngBytes)},
			RefusedNoData, "Image couldn't be shown: its block has no data or type."},
		{"too large", map[string]any{"type": "image", "data": "", "mimeType": "image/png", "tooLarge": 3_200_000},
			RefusedTooLarge, "Image couldn't be shown: it did not fit in one message (3.2 MB)."},
		{"too large with data", map[string]any{"type": "image", "data": b64(pngBytes), "mimeType": "image/png", "tooLarge": 1},
			RefusedTooLarge, "Image couldn't be shown: it did not fit in one message (0.0 MB)."},
		{"avif too large to make smaller", map[string]any{"type": "image", "data": b64(picturetest.AVIF(8000, 6000)), "mimeType": "image/avif"},
			RefusedTooManyPixels, "Image couldn't be shown: it is more pixels than Chopin can make smaller (8000 × 6000)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, ok := ReadToolResult(result(t, tc.block), tenMiB)
			if !ok || len(content.Images) != 1 {
				t.Fatalf("content %+v, ok %v", content, ok)
			}
			r := content.Images[0].Refused
			if r == nil {
				t.Fatal("not refused")
			}
			if r.Code != tc.code || r.Reason != tc.reason {
				t.Fatalf("got %s %q\nwant %s %q", r.Code, r.Reason, tc.code, tc.reason)
			}
		})
	}
}

func TestReadToolResultShape(t *testing.T) {
	pngBytes := picturetest.PNG(t, picturetest.Gradient(4, 4, false))
	unpadded := strings.TrimRight(b64(pngBytes), "=")
	if unpadded == b64(pngBytes) {
		t.Fatal("pick an image whose base64 is padded")
	}
	obj := map[string]any{"content": []any{
		map[string]any{"type": "image", "data": unpadded, "mimeType": "image/png", "alt": 7, "caption": nil},
		map[string]any{"type": "image", "data": b64([]byte("<svg/>")), "mimeType": "image/svg+xml"},
		"not a block",
		map[string]any{"type": "resource", "uri": "x"},
		map[string]any{"type": "image", "data": b64(pngBytes), "mimeType": "image/png", "alt": ""},
		map[string]any{"type": "image", "data": b64([]byte("<svg/>")), "mimeType": "image/svg+xml"},
		map[string]any{"type": "text", "text": 5},
	}}
	raw, _ := json.Marshal(obj)
	text, _ := json.Marshal(string(raw)) // the JSON text of the same object
	for _, r := range []json.RawMessage{raw, text} {
		content, ok := ReadToolResult(r, tenMiB)
		if !ok || len(content.Images) != 4 || len(content.Text) != 0 {
			t.Fatalf("content %+v, ok %v", content, ok)
		}
		first := content.Images[0]
		if first.Refused != nil || first.Alt != nil || first.Caption != nil || !bytes.Equal(first.Image.Data, pngBytes) {
			t.Fatalf("first block: %+v", first)
		}
		if a := content.Images[2].Alt; a == nil || *a != "" {
			t.Fatalf("an empty alt is kept as given: %v", a)
		}
		// Duplicates are kept; before counts the images shown ahead of each.
		shown, refused := PlaceImages(content.Images, 3)
		if len(shown) != 2 || len(refused) != 2 || refused[0].Before != 4 || refused[1].Before != 5 {
			t.Fatalf("shown %d, refused %+v", len(shown), refused)
		}
		// The same bytes are the same image.
		if shown[0].Image.SHA256 != shown[1].Image.SHA256 {
			t.Fatal("the same bytes hashed differently")
		}
		wire, _ := json.Marshal(refused[0])
		if string(wire) != `{"reason":"Image couldn't be shown: its type, image/svg+xml, is not one Chat shows.","before":4}` {
			t.Fatalf("wire form %s", wire)
		}
	}
	for _, r := range []string{`{"ok":true}`, `"plain text"`, `[1,2]`, `{"content":"x"}`, `null`} {
		if _, ok := ReadToolResult(json.RawMessage(r), tenMiB); ok {
			t.Errorf("%s read as content", r)
		}
	}
}

func TestNotStored(t *testing.T) {
	ti := ToolImage{}
	ti.NotStored()
	if ti.Refused.Code != RefusedNotStored || ti.Refused.Reason != "Image couldn't be shown: Chopin could not store it." {
		t.Fatalf("%+v", ti.Refused)
	}
}

func TestTooManyPixels(t *testing.T) {
	// A PNG of 10000×6000 compresses to little but would take 240 MB to decode.
	img := image.NewGray(image.Rect(0, 0, 10000, 6000))
	data := picturetest.PNG(t, img)
	content, _ := ReadToolResult(result(t, map[string]any{"type": "image", "data": b64(data), "mimeType": "image/png"}), tenMiB)
	if r := content.Images[0].Refused; r == nil || r.Reason != "Image couldn't be shown: it is more pixels than Chopin can make smaller (10000 × 6000)." {
		t.Fatalf("refused %+v", r)
	}
}

func TestPrepareUpload(t *testing.T) {
	pngBytes := picturetest.PNG(t, picturetest.Gradient(40, 30, true))
	args := UploadImageArgs{Data: b64(pngBytes), MimeType: "image/png", Alt: "Option A: a [sketch] of the layout"}
	img, err := PrepareUpload(args, tenMiB)
	if err != nil {
		t.Fatal(err)
	}
	again, err := PrepareUpload(args, tenMiB)
	if err != nil || again.SHA256 != img.SHA256 || !bytes.Equal(img.Data, pngBytes) {
		t.Fatalf("the same bytes gave %s and %s (%v)", img.SHA256, again.SHA256, err)
	}
	res := UploadResult(img, args.Alt)
	want := `{"path":"/images/` + img.SHA256 + `.png","markdown":"![Option A: a \\[sketch\\] of the layout](/images/` + img.SHA256 + `.png)"}`
	if raw, _ := json.Marshal(res); string(raw) != want {
		t.Fatalf("result %s\nwant   %s", raw, want)
	}

	for _, tc := range []struct {
		name string
		args UploadImageArgs
		code string
		msg  string
	}{
		{"no alt", UploadImageArgs{Data: b64(pngBytes), MimeType: "image/png", Alt: " "}, CodeInvalidArgument,
			"alt is required: say in words what the image shows, on one line of at most 200 characters."},
		{"two lines", UploadImageArgs{Data: b64(pngBytes), MimeType: "image/png", Alt: "a\nb"}, CodeInvalidArgument,
			"alt must be one line; write it without line breaks."},
		{"long alt", UploadImageArgs{Data: b64(pngBytes), MimeType: "image/png", Alt: strings.Repeat("é", 201)}, CodeInvalidArgument,
			"alt is 201 characters; it may have at most 200."},
		{"svg", UploadImageArgs{Data: b64([]byte("<svg/>")), MimeType: "image/svg+xml", Alt: "x"}, CodeUnsupportedImage,
			`mimeType must be image/png, image/jpeg, image/webp or image/gif; it was "image/svg+xml".`},
		{"bmp is not taken", UploadImageArgs{Data: b64(picturetest.BMP(t, picturetest.Gradient(4, 4, false))), MimeType: "image/bmp", Alt: "x"}, CodeUnsupportedImage,
			`mimeType must be image/png, image/jpeg, image/webp or image/gif; it was "image/bmp".`},
		{"mislabelled", UploadImageArgs{Data: b64(pngBytes), MimeType: "image/jpeg", Alt: "x"}, CodeImageTypeMismatch,
			"The image does not match mimeType image/jpeg: bytes are a PNG image, not a JPEG. Send the bytes with the type they are."},
		{"not base64", UploadImageArgs{Data: "%%%", MimeType: "image/png", Alt: "x"}, CodeInvalidArgument,
			"data must be the image's bytes in standard base64."},
		{"over 16 MiB", UploadImageArgs{Data: strings.Repeat("A", (MaxUploadImageBytes+3)/3*4+8), MimeType: "image/png", Alt: "x"}, CodeImageTooLarge,
			"The image is over 16 MiB (16777216 bytes), the most upload_plan_image takes. Make it smaller and upload it again."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PrepareUpload(tc.args, tenMiB)
			var re *Error
			if !errors.As(err, &re) || re.Code != tc.code || re.Message != tc.msg {
				t.Fatalf("got %v\nwant %s %q", err, tc.code, tc.msg)
			}
		})
	}
}

func TestPrepareUploadOverOneMiB(t *testing.T) {
	data := picturetest.PNG(t, picturetest.Noise(800, 600)) // about 1.4 MB
	if len(data) <= UploadStoredImageBytes {
		t.Fatalf("only %d bytes", len(data))
	}
	img, err := PrepareUpload(UploadImageArgs{Data: b64(data), MimeType: "image/png", Alt: "noise"}, tenMiB)
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Data) > UploadStoredImageBytes || img.MimeType != "image/webp" || img.Width >= 800 {
		t.Fatalf("stored %s %d×%d, %d bytes", img.MimeType, img.Width, img.Height, len(img.Data))
	}
	again, _ := PrepareUpload(UploadImageArgs{Data: b64(data), MimeType: "image/png", Alt: "noise"}, tenMiB)
	if again.SHA256 != img.SHA256 {
		t.Fatal("the smaller copy of the same bytes differs")
	}
}
