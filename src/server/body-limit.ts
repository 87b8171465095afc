/** The largest request body the server reads (kube-apiserver's 3 MiB), for any caller who passed the gate. */
export const maxBodyBytes = 3 * 1024 * 1024;

/**
 * At most this many duplicate keys of a body are named (a JSON body's with its paths cut to 256
 * characters, a YAML body's keys likewise): 2,048 duplicates under a path of a megabyte otherwise
 * made gigabytes of error text (found by a review). kube names them all; a client needs the first.
 */
export const maxDuplicatesNamed = 100;
