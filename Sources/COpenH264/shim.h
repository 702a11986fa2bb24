#ifndef COPENH264_SHIM_H
#define COPENH264_SHIM_H
// libopenh264's C interface is a table of function pointers called as
// (*handle)->Method(handle, ...); these one-line wrappers keep that shape
// out of Swift.
#include <wels/codec_api.h>
#include <wels/codec_ver.h>

static inline int swiftlet_h264enc_default_params(ISVCEncoder *e, SEncParamExt *p) { return (*e)->GetDefaultParams(e, p); }
static inline int swiftlet_h264enc_initialize(ISVCEncoder *e, const SEncParamExt *p) { return (*e)->InitializeExt(e, p); }
static inline int swiftlet_h264enc_encode(ISVCEncoder *e, const SSourcePicture *s, SFrameBSInfo *i) { return (*e)->EncodeFrame(e, s, i); }
static inline int swiftlet_h264enc_force_idr(ISVCEncoder *e) { return (*e)->ForceIntraFrame(e, true); }
static inline int swiftlet_h264enc_set_option(ISVCEncoder *e, ENCODER_OPTION o, void *v) { return (*e)->SetOption(e, o, v); }
static inline int swiftlet_h264enc_uninitialize(ISVCEncoder *e) { return (*e)->Uninitialize(e); }

static inline long swiftlet_h264dec_initialize(ISVCDecoder *d, const SDecodingParam *p) { return (*d)->Initialize(d, p); }
static inline long swiftlet_h264dec_set_option(ISVCDecoder *d, DECODER_OPTION o, void *v) { return (*d)->SetOption(d, o, v); }
static inline DECODING_STATE swiftlet_h264dec_decode(ISVCDecoder *d, const unsigned char *src, int length, unsigned char **dst, SBufferInfo *info) {
    return (*d)->DecodeFrameNoDelay(d, src, length, dst, info);
}
static inline long swiftlet_h264dec_uninitialize(ISVCDecoder *d) { return (*d)->Uninitialize(d); }
#endif
