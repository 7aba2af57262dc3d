/* A stand-in libnvidia-ml.so.1 for gflow on a machine without a GPU: FAKE_NVML_GPUS (default 4)
 * idle 24 GiB GPUs, no processes. Built by harness/install.py, which appends a stub answering
 * NVML_ERROR_NOT_SUPPORTED for every other NVML symbol the gflow binary names. */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdint.h>
typedef void *dev_t_;
static unsigned count(void) { const char *e = getenv("FAKE_NVML_GPUS"); return e ? (unsigned)atoi(e) : 4; }
static unsigned idx(dev_t_ d) { return (unsigned)((uintptr_t)d - 1); }
int nvmlInit_v2(void) { return 0; }
int nvmlInit(void) { return 0; }
int nvmlInitWithFlags(unsigned f) { return 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) { return r ? "Not Supported" : "Success"; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = count(); return 0; }
int nvmlDeviceGetCount(unsigned *n) { *n = count(); return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev_t_ *d) { if (i >= count()) return 2; *d = (dev_t_)(uintptr_t)(i + 1); return 0; }
int nvmlDeviceGetHandleByIndex(unsigned i, dev_t_ *d) { return nvmlDeviceGetHandleByIndex_v2(i, d); }
int nvmlDeviceGetIndex(dev_t_ d, unsigned *i) { *i = idx(d); return 0; }
int nvmlDeviceGetMinorNumber(dev_t_ d, unsigned *i) { *i = idx(d); return 0; }
int nvmlDeviceGetUUID(dev_t_ d, char *buf, unsigned n) { snprintf(buf, n, "GPU-fake0000-0000-0000-0000-%012u", idx(d)); return 0; }
int nvmlDeviceGetName(dev_t_ d, char *buf, unsigned n) { snprintf(buf, n, "Fake GPU"); return 0; }
int nvmlDeviceGetSerial(dev_t_ d, char *buf, unsigned n) { snprintf(buf, n, "%u", idx(d)); return 0; }
typedef struct { unsigned long long total, free, used; } mem1;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } mem2;
int nvmlDeviceGetMemoryInfo(dev_t_ d, mem1 *m) { m->total = 24ULL << 30; m->free = m->total; m->used = 0; return 0; }
int nvmlDeviceGetMemoryInfo_v2(dev_t_ d, mem2 *m) { m->total = 24ULL << 30; m->reserved = 0; m->free = m->total; m->used = 0; return 0; }
static int noprocs(dev_t_ d, unsigned *n, void *infos) { *n = 0; return 0; }
int nvmlDeviceGetComputeRunningProcesses_v3(dev_t_ d, unsigned *n, void *p) { return noprocs(d, n, p); }
int nvmlDeviceGetComputeRunningProcesses_v2(dev_t_ d, unsigned *n, void *p) { return noprocs(d, n, p); }
int nvmlDeviceGetComputeRunningProcesses(dev_t_ d, unsigned *n, void *p) { return noprocs(d, n, p); }
int nvmlDeviceGetGraphicsRunningProcesses_v3(dev_t_ d, unsigned *n, void *p) { return noprocs(d, n, p); }
int nvmlDeviceGetMPSComputeRunningProcesses_v3(dev_t_ d, unsigned *n, void *p) { return noprocs(d, n, p); }
typedef struct { unsigned gpu, memory; } util;
int nvmlDeviceGetUtilizationRates(dev_t_ d, util *u) { u->gpu = 0; u->memory = 0; return 0; }
int nvmlSystemGetDriverVersion(char *buf, unsigned n) { snprintf(buf, n, "999.99"); return 0; }
int nvmlSystemGetNVMLVersion(char *buf, unsigned n) { snprintf(buf, n, "12.999"); return 0; }
int nvmlSystemGetCudaDriverVersion(int *v) { *v = 12040; return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 12040; return 0; }
int nvmlDeviceGetTemperature(dev_t_ d, int s, unsigned *t) { *t = 30; return 0; }
int nvmlDeviceGetPowerUsage(dev_t_ d, unsigned *p) { *p = 50000; return 0; }
