// SPDX-License-Identifier: MIT
/*
 * A main() for the fuzz targets without libFuzzer: runs each input file
 * given (a directory: every file in it, in name order) once through
 * LLVMFuzzerTestOneInput. The CTest tests fuzz_replay_<name> replay
 * fuzz/corpus/<name>/ this way in every build, gcc and sanitizers included,
 * so a corpus input kept as a regression test runs even where clang does
 * not. A property a target checks fails by trapping, as under libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads path into a heap block of exactly its size, as libFuzzer hands inputs over. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	buf = malloc(len ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned int *n)
{
	struct dirent *de;
	char **names = NULL;
	size_t cnt = 0, cap = 0, i;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (cnt == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (!nn) {
				err = -1;
				break;
			}
			names = nn;
		}
		names[cnt] = strdup(de->d_name);
		if (!names[cnt]) {
			err = -1;
			break;
		}
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(names, cnt, sizeof(*names), by_name);
	for (i = 0; i < cnt && !err; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (run_file(path)) {
			fprintf(stderr, "cannot read %s\n", path);
			err = -1;
		}
		(*n)++;
	}
	for (i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
	return err;
}

int main(int argc, char **argv)
{
	unsigned int n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		int err;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: no such file or directory\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			err = run_dir(argv[i], &n);
		} else {
			err = run_file(argv[i]);
			n++;
		}
		if (err) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return 1;
		}
	}
	printf("%u inputs ran\n", n);
	return 0;
}
