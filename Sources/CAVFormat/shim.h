#ifndef CAVFORMAT_SHIM_H
#define CAVFORMAT_SHIM_H
// FFmpeg's container writer (libavformat) and the parts of libavcodec and
// libavutil it needs: codec parameters, packets, dictionaries, memory.
// Only functions, structs and enum constants are used from Swift, so no C
// shim is needed (AV_PKT_FLAG_KEY and AV_INPUT_BUFFER_PADDING_SIZE import
// as constants; errors are negative errno values or FFERRTAG codes, read
// with av_strerror).
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/mem.h>
#endif
