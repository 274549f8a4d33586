from disklab.fio.executor import summarise_stderr


def test_a_job_error_is_spelled_out_from_its_errno():
    line = "fio: pid=15259, err=1/file:filesetup.c:805, func=open(/mnt/x/locked.bin), error=Operation not p"
    assert summarise_stderr(f"note: something\n{line}\n") == "open /mnt/x/locked.bin: Operation not permitted"


def test_other_messages_give_the_first_error_line_or_the_last_line():
    assert summarise_stderr("fio: io engine e4defrag init failed.\nmore\n") == "fio: io engine e4defrag init failed."
    assert summarise_stderr("a\nb\n") == "b"
    assert summarise_stderr("") == "no message"
