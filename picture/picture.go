package picture

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"runtime/debug"
	"strings"

	"github.com/HugoSmits86/nativewebp"
	"golang.org/x/image/bmp"
	"golang.org/x/image/webp"
)

// What an image really is and a copy of it small enough to keep. It tells
// the type from the bytes, refuses what a browser would not draw as a
// raster, reads the size a browser shows (a JPEG's EXIF rotation applied),
// and makes a smaller copy of an image that is too large, and thumbnails.
// Everything here is a pure function of bytes; decoding and encoding are
// CPU work, so callers run it outside their locks.

// Image is an image ready to keep: its bytes as they are to be stored and
// what they are. It is addressed by the SHA-256 of Data.
type Image struct {
	SHA256   string // lowercase hex SHA-256 of Data
	Ext      string // png, jpg, webp, gif, avif, bmp or ico
	MimeType string // the type the bytes are
	Width    int    // as a browser shows it (a JPEG's EXIF rotation applied)
	Height   int
	Data     []byte
}

const (
	// MaxSide is the longest side, in pixels, of an image Fit keeps as it
	// is; a larger one is kept as a smaller copy.
	MaxSide = 4096
	// MaxPixels bounds the images decoded to make a smaller copy or a
	// thumbnail (about 200 MB of memory as RGBA); a larger one is refused
	// from its header, before any of it is decoded.
	MaxPixels = 50_000_000
	// MaxWebPPixels bounds a smaller copy made as a WebP: the pure-Go
	// lossless encoder holds about 50 bytes a pixel while it works, so a
	// 4096×4096 copy would need 800 MB. 4 megapixels (2048×2048) keeps it
	// near 200 MB.
	MaxWebPPixels = 4 << 20
	// jpegQuality is the quality of a JPEG's smaller copy and thumbnails.
	jpegQuality = 85
)

// webpEffort is the lossless WebP encoder's effort. Its least effort
// changes only how finely it picks its transforms and histograms: on the
// pictures measured (docs/performance.md) the copy is the same size within
// 1% and made about a quarter faster. A variable so the benchmark can set
// the encoder's default beside it.
var webpEffort = nativewebp.BestSpeed

// Type is one of the raster types a browser draws that this package reads.
// There is one value per type, so types compare with ==.
type Type struct {
	mime, ext, name string
	decode          func(io.Reader) (image.Image, error) // nil: it cannot be decoded here
}

// MimeType is the type's own name, such as image/png.
func (t *Type) MimeType() string { return t.mime }

// Ext is the file extension for the type, without a dot: png, jpg, webp, gif,
// avif, bmp or ico.
func (t *Type) Ext() string { return t.ext }

// The types; AVIF and ICO are read (type and size) but never decoded.
var (
	PNG  = &Type{"image/png", "png", "a PNG", png.Decode}
	JPEG = &Type{"image/jpeg", "jpg", "a JPEG", jpeg.Decode}
	WebP = &Type{"image/webp", "webp", "a WebP", webp.Decode}
	GIF  = &Type{"image/gif", "gif", "a GIF", gif.Decode} // the first frame
	AVIF = &Type{"image/avif", "avif", "an AVIF", nil}
	BMP  = &Type{"image/bmp", "bmp", "a BMP", bmp.Decode}
	ICO  = &Type{"image/x-icon", "ico", "an ICO", nil}
)

// typeNames maps every name a type goes by to the type whose bytes it
// means. The usual other names are read as the type their bytes are: an
// APNG is a PNG, image/jpg a JPEG.
var typeNames = map[string]*Type{
	"image/png": PNG, "image/apng": PNG, "image/x-png": PNG, "image/vnd.mozilla.apng": PNG,
	"image/jpeg": JPEG, "image/jpg": JPEG, "image/pjpeg": JPEG,
	"image/webp": WebP,
	"image/gif":  GIF,
	"image/avif": AVIF,
	"image/bmp":  BMP, "image/x-ms-bmp": BMP, "image/x-bmp": BMP,
	"image/x-icon": ICO, "image/vnd.microsoft.icon": ICO, "image/ico": ICO, "image/icon": ICO,
}

// Lookup reads a MIME type as a sender wrote it, its usual other names
// included: case and parameters (image/PNG; charset=binary) do not matter.
// It returns nil for any type this package does not read.
func Lookup(name string) *Type {
	name, _, _ = strings.Cut(name, ";")
	return typeNames[strings.ToLower(strings.TrimSpace(name))]
}

// Why an image's bytes are not what it says they are.
type bytesProblem int

const (
	bytesOK        bytesProblem = iota
	bytesNotType                // not an image of the named type
	bytesOtherType              // an image of another type
	bytesCutShort               // the named type, cut short
)

// badBytes is a bytesProblem with what it found.
type badBytes struct {
	problem bytesProblem
	named   *Type
	found   *Type // for bytesOtherType
}

func (b *badBytes) Error() string {
	switch b.problem {
	case bytesOtherType:
		return fmt.Sprintf("its bytes are %s image, not %s", b.found.name, b.named.name)
	case bytesCutShort:
		return fmt.Sprintf("its bytes are cut short, not a whole %s image", strings.TrimPrefix(strings.TrimPrefix(b.named.name, "a "), "an "))
	}
	return fmt.Sprintf("its bytes are not %s image", b.named.name)
}

// TooManyPixelsError says an image needs a smaller copy that cannot be
// made: it has more than MaxPixels pixels, or its type is never decoded.
type TooManyPixelsError struct{ Width, Height int }

func (e *TooManyPixelsError) Error() string {
	return fmt.Sprintf("it is more pixels than Chopin can make smaller (%d × %d)", e.Width, e.Height)
}

// Sniff tells the type of data from its bytes alone, or nil.
func Sniff(data []byte) *Type {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return GIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return WebP
	case isAVIF(data):
		return AVIF
	case len(data) >= 18 && string(data[:2]) == "BM" && validBMPHeader(binary.LittleEndian.Uint32(data[14:18])):
		return BMP
	case len(data) >= 6 && bytes.HasPrefix(data, []byte{0, 0, 1, 0}) && binary.LittleEndian.Uint16(data[4:6]) > 0:
		return ICO
	}
	return nil
}

// Measure checks that data is a whole image of type named and reads its
// size as a browser shows it. When it is not, the error's text is a clause
// saying why, such as "its bytes are a PNG image, not a JPEG".
func Measure(named *Type, data []byte) (w, h int, err error) {
	found := Sniff(data)
	if found == nil {
		return 0, 0, &badBytes{problem: bytesNotType, named: named}
	}
	if found != named {
		return 0, 0, &badBytes{problem: bytesOtherType, named: named, found: found}
	}
	cutShort := &badBytes{problem: bytesCutShort, named: named}
	notType := &badBytes{problem: bytesNotType, named: named}
	var cfg image.Config
	switch named {
	case PNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(data))
		if err == nil && !bytes.Contains(data, []byte("IEND\xaeB`\x82")) {
			return 0, 0, cutShort
		}
	case JPEG:
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(data))
		if err == nil && !bytes.Contains(data[2:], []byte{0xFF, 0xD9}) {
			return 0, 0, cutShort
		}
		if err == nil && jpegOrientation(data) >= 5 {
			cfg.Width, cfg.Height = cfg.Height, cfg.Width
		}
	case GIF:
		cfg, err = gif.DecodeConfig(bytes.NewReader(data))
		// The trailer byte ends a whole GIF (padding after it is harmless).
		if trimmed := bytes.TrimRight(data, "\x00"); err == nil && trimmed[len(trimmed)-1] != 0x3B {
			return 0, 0, cutShort
		}
	case WebP:
		if 8+int64(binary.LittleEndian.Uint32(data[4:8])) > int64(len(data)) {
			return 0, 0, cutShort
		}
		cfg, err = webp.DecodeConfig(bytes.NewReader(data))
	case AVIF:
		cfg.Width, cfg.Height, err = avifSize(data)
	case BMP:
		cfg.Width, cfg.Height, err = bmpSize(data)
	case ICO:
		cfg.Width, cfg.Height, err = icoSize(data)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, errCutShort):
		return 0, 0, cutShort
	case err != nil:
		return 0, 0, notType
	case cfg.Width <= 0 || cfg.Height <= 0:
		return 0, 0, notType
	}
	return cfg.Width, cfg.Height, nil
}

var errCutShort = errors.New("cut short")

// Fit makes the Image to store from bytes of type t and size w×h:
// the bytes themselves when they fit maxBytes and MaxSide, else a
// smaller copy (at most MaxSide on its longest side and, as a WebP, at
// most MaxWebPPixels, then narrower until it fits): a JPEG stays a JPEG,
// anything else becomes a WebP, which keeps transparency. Making a copy
// waits for its share of the process's decoding budget.
func Fit(t *Type, data []byte, w, h int, maxBytes int64) (Image, error) {
	if int64(len(data)) <= maxBytes && max(w, h) <= MaxSide {
		return newImage(t, data, w, h), nil
	}
	if t.decode == nil || int64(w)*int64(h) > MaxPixels {
		return Image{}, &TooManyPixelsError{w, h}
	}
	var img Image
	err := withBudget(w, h, func() (err error) {
		img, err = smallerCopy(t, data, w, h, maxBytes)
		return err
	})
	return img, err
}

func smallerCopy(t *Type, data []byte, w, h int, maxBytes int64) (Image, error) {
	out := WebP
	if t == JPEG {
		out = JPEG
	}
	factor := min(1, float64(MaxSide)/float64(max(w, h)))
	if out == WebP {
		factor = min(factor, math.Sqrt(MaxWebPPixels/(float64(w)*float64(h))))
	}
	if t == PNG || t == WebP || t == GIF {
		// Already compressed without loss: a lossless WebP of the same
		// pixels is about as large, so aim under the limit at once rather
		// than encode the whole picture to learn that (each encode of a
		// large picture costs seconds).
		factor = min(factor, math.Sqrt(float64(maxBytes)/float64(len(data)))*0.95)
	}
	size := func(f float64) (int, int) {
		return max(1, int(math.Round(float64(w)*f))), max(1, int(math.Round(float64(h)*f)))
	}
	// The source is let go as soon as its first copy is made; any smaller
	// copy after that is made from the first.
	fw, fh := size(factor)
	first, err := shrunk(t, data, w, h, fw, fh)
	if err != nil {
		return Image{}, err
	}
	for range 12 {
		tw, th := size(factor)
		enc, err := encode(out, resize(first, tw, th))
		if err != nil {
			return Image{}, err
		}
		if int64(len(enc)) <= maxBytes {
			return newImage(out, enc, tw, th), nil
		}
		if tw == 1 && th == 1 {
			break
		}
		// Bytes grow with the pixels: aim under the limit with a margin.
		factor *= math.Sqrt(float64(maxBytes)/float64(len(enc))) * 0.95
	}
	return Image{}, errors.New("no smaller copy fits")
}

// shrunk decodes data and makes it tw×th; nothing of the decoded source
// outlives it, and the memory of a large one is given back.
func shrunk(t *Type, data []byte, w, h, tw, th int) (image.Image, error) {
	src, err := decode(t, data, w, h)
	if err != nil {
		return nil, err
	}
	small := resize(src, tw, th)
	if small != src && int64(w)*int64(h) >= giveBackPixels {
		src = nil
		debug.FreeOSMemory()
	}
	return small, nil
}

func newImage(t *Type, data []byte, w, h int) Image {
	sum := sha256.Sum256(data)
	return Image{SHA256: hex.EncodeToString(sum[:]), Ext: t.ext, MimeType: t.mime, Width: w, Height: h, Data: data}
}

// decode decodes bytes Measure accepted, as a browser shows them
// (a JPEG's EXIF rotation applied). w and h are that size.
func decode(t *Type, data []byte, w, h int) (image.Image, error) {
	if t.decode == nil || int64(w)*int64(h) > MaxPixels { // checked again: decoding is what costs
		return nil, &TooManyPixelsError{w, h}
	}
	img, err := t.decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", t.ext, err)
	}
	if t == JPEG {
		img = orient(img, jpegOrientation(data))
	}
	return img, nil
}

func encode(t *Type, img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	switch t {
	case JPEG:
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpegQuality})
	case WebP:
		err = nativewebp.Encode(&buf, img, &nativewebp.Options{CompressionLevel: webpEffort})
	default:
		err = fmt.Errorf("cannot encode %s", t.ext)
	}
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t.ext, err)
	}
	return buf.Bytes(), nil
}

// Thumbnail is img at most width pixels wide. ok is false when the image
// itself is what to serve: it is no wider, or a smaller copy
// would lose what it is (an animation) or cannot be made (AVIF, ICO). A
// JPEG's thumbnail is a JPEG; any other is a WebP, which keeps
// transparency.
func Thumbnail(img Image, width int) (thumb Image, ok bool, err error) {
	t := typeNames[img.MimeType]
	if t == nil || width <= 0 || width >= img.Width || t.decode == nil || animated(t, img.Data) {
		return Image{}, false, nil
	}
	if int64(img.Width)*int64(img.Height) > MaxPixels {
		return Image{}, false, nil
	}
	h := max(1, int(math.Round(float64(img.Height)*float64(width)/float64(img.Width))))
	out := WebP
	if t == JPEG {
		out = JPEG
	}
	err = withBudget(img.Width, img.Height, func() error {
		small, err := shrunk(t, img.Data, img.Width, img.Height, width, h)
		if err != nil {
			return err
		}
		enc, err := encode(out, small)
		thumb = newImage(out, enc, width, h)
		return err
	})
	if err != nil {
		return Image{}, false, err
	}
	return thumb, true, nil
}

// animated reports whether the image moves; its first frame alone would
// misrepresent it. A GIF is taken to move: checking costs a full decode,
// and GIFs are small.
func animated(t *Type, data []byte) bool {
	switch t {
	case GIF:
		return true
	case PNG: // an APNG has an acTL chunk before its first IDAT
		i, j := bytes.Index(data, []byte("acTL")), bytes.Index(data, []byte("IDAT"))
		return i >= 0 && (j < 0 || i < j)
	case WebP: // VP8X with the animation flag
		return len(data) >= 21 && string(data[12:16]) == "VP8X" && data[20]&0x02 != 0
	}
	return false
}
