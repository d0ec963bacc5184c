/* image.c: see image.h for the formats and where their sizes are. */
#include <string.h>

#include "tools/image.h"

static unsigned long
be16(const unsigned char *p)
{
	return (unsigned long)p[0] << 8 | p[1];
}

static unsigned long
be32(const unsigned char *p)
{
	return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 |
	    (unsigned long)p[2] << 8 | p[3];
}

static unsigned long
le16(const unsigned char *p)
{
	return (unsigned long)p[1] << 8 | p[0];
}

static unsigned long
le24(const unsigned char *p)
{
	return (unsigned long)p[2] << 16 | (unsigned long)p[1] << 8 | p[0];
}

/* JPEG: walk the marker segments to the first start-of-frame. */
static void
jpeg_size(const unsigned char *b, size_t len, unsigned long *w, unsigned long *h)
{
	size_t		i = 2, seglen;
	unsigned char	m;

	while (i + 1 < len) {
		if (b[i] != 0xff)
			return;		/* not a marker: malformed */
		m = b[i + 1];
		if (m == 0xff) {	/* fill byte */
			i++;
			continue;
		}
		i += 2;
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd9))
			continue;	/* markers without a length */
		if (i + 2 > len)
			return;
		seglen = be16(b + i);
		if (seglen < 2)
			return;
		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 &&
		    m != 0xcc) {
			/* SOFn: length, precision, height, width. */
			if (i + 7 > len)
				return;
			*h = be16(b + i + 3);
			*w = be16(b + i + 5);
			return;
		}
		i += seglen;
	}
}

enum image_format
image_info(const unsigned char *b, size_t len, unsigned long *w, unsigned long *h)
{
	*w = *h = 0;
	if (len >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) {
		if (len >= 24 && memcmp(b + 12, "IHDR", 4) == 0) {
			*w = be32(b + 16);
			*h = be32(b + 20);
		}
		return IMAGE_PNG;
	}
	if (len >= 6 && (memcmp(b, "GIF87a", 6) == 0 ||
	    memcmp(b, "GIF89a", 6) == 0)) {
		if (len >= 10) {
			*w = le16(b + 6);
			*h = le16(b + 8);
		}
		return IMAGE_GIF;
	}
	if (len >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0) {
		if (len >= 30 && memcmp(b + 12, "VP8 ", 4) == 0) {
			*w = le16(b + 26) & 0x3fff;
			*h = le16(b + 28) & 0x3fff;
		} else if (len >= 25 && memcmp(b + 12, "VP8L", 4) == 0) {
			*w = 1 + (b[21] | (unsigned long)(b[22] & 0x3f) << 8);
			*h = 1 + ((unsigned long)b[22] >> 6 |
			    (unsigned long)b[23] << 2 |
			    (unsigned long)(b[24] & 0x0f) << 10);
		} else if (len >= 30 && memcmp(b + 12, "VP8X", 4) == 0) {
			*w = 1 + le24(b + 24);
			*h = 1 + le24(b + 27);
		}
		return IMAGE_WEBP;
	}
	if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) {
		jpeg_size(b, len, w, h);
		return IMAGE_JPEG;
	}
	return IMAGE_UNKNOWN;
}

const char *
image_mime(enum image_format f)
{
	switch (f) {
	case IMAGE_PNG:	return "image/png";
	case IMAGE_JPEG: return "image/jpeg";
	case IMAGE_GIF:	return "image/gif";
	case IMAGE_WEBP: return "image/webp";
	default:	return NULL;
	}
}

const char *
image_name(enum image_format f)
{
	switch (f) {
	case IMAGE_PNG:	return "PNG";
	case IMAGE_JPEG: return "JPEG";
	case IMAGE_GIF:	return "GIF";
	case IMAGE_WEBP: return "WebP";
	default:	return "unknown";
	}
}
