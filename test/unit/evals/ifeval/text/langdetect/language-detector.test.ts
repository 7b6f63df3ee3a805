// Expected values come from Python langdetect 1.0.9 (Debian python3-langdetect) with DetectorFactory.seed = 0 and
// profiles loaded in sorted file-name order; probabilities must match to the last bit. To add a case, run
// detect_langs(text) in Python that way and paste [label, text, [[lang, prob], ...]] into the table.
import { beforeAll, describe, expect, it } from 'vitest';

import { loadLangdetectData } from '../../../../../../evals/ifeval/node/load-text-tools.js';
import type { LangdetectData } from '../../../../../../evals/ifeval/text/langdetect/langdetect-data.js';
import { LanguageDetector } from '../../../../../../evals/ifeval/text/langdetect/language-detector.js';
import { LangDetectError } from '../../../../../../evals/ifeval/text/text-tools.js';
import { loadGolden } from '../golden/golden.js';

let data: LangdetectData;
let detector: LanguageDetector;

beforeAll(async () => {
  data = await loadLangdetectData();
  detector = new LanguageDetector(data);
});

describe('LanguageDetector (langdetect 1.0.9, seed 0)', () => {
  it('loads the 55 Python profiles', () => {
    expect(detector.langlist).toHaveLength(55);
    expect(detector.langlist).toEqual(expect.arrayContaining(['ca', 'cy', 'ko', 'zh-cn', 'zh-tw']));
  });

  it.each<[string, string, Array<[string, number]>]>([
    ['en', 'The quick brown fox jumps over the lazy dog while the children play in the garden.', [["en", 0.9999960420070593]]],
    ['fr', 'Le renard brun rapide saute par-dessus le chien paresseux pendant que les enfants jouent.', [["fr", 0.999996290677066]]],
    ['de', 'Der schnelle braune Fuchs springt über den faulen Hund, während die Kinder im Garten spielen.', [["de", 0.9999965869007896]]],
    ['es', 'El rápido zorro marrón salta sobre el perro perezoso mientras los niños juegan en el jardín.', [["es", 0.9999953992313277]]],
    ['it', 'La volpe marrone veloce salta sopra il cane pigro mentre i bambini giocano nel giardino.', [["it", 0.9999965881501974]]],
    ['pt', 'A rápida raposa marrom pula sobre o cão preguiçoso enquanto as crianças brincam no jardim.', [["pt", 0.9999953701801574]]],
    ['ru', 'Быстрая коричневая лиса прыгает через ленивую собаку, пока дети играют в саду.', [["ru", 0.9999988330032823]]],
    ['hi', 'तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है जबकि बच्चे बगीचे में खेलते हैं।', [["hi", 0.9999998287757011]]],
    ['ja', '素早い茶色の狐が怠け者の犬を飛び越え、子供たちは庭で遊んでいます。', [["ja", 0.9999999974604881]]],
    ['zh', '敏捷的棕色狐狸跳过了懒狗，孩子们在花园里玩耍。', [["zh-cn", 0.9999943094668712]]],
    ['zhtw', '敏捷的棕色狐狸跳過了懶狗，孩子們在花園裡玩耍。', [["zh-tw", 0.9999985787976242]]],
    ['ko', '빠른 갈색 여우가 게으른 개를 뛰어넘고 아이들은 정원에서 놀고 있습니다.', [["ko", 0.9999973458953291]]],
    ['ar', 'الثعلب البني السريع يقفز فوق الكلب الكسول بينما يلعب الأطفال في الحديقة.', [["ar", 0.9999975735009072]]],
    ['fa', 'روباه قهوه\u200cای سریع از روی سگ تنبل می\u200cپرد در حالی که بچه\u200cها در باغ بازی می\u200cکنند.', [["fa", 0.999999211573815]]],
    ['vi', 'Con cáo nâu nhanh nhẹn nhảy qua con chó lười trong khi bọn trẻ chơi trong vườn.', [["vi", 0.9999994142392468]]],
    ['vi_decomposed', 'Con ca\u0301o nâu nhanh nhe\u0323n nha\u0309y qua con cho\u0301 lươ\u0300i trong khi bo\u0323n tre\u0309 chơi trong vươ\u0300n.', [["vi", 0.9999994142392468]]],
    ['th', 'สุนัขจิ้งจอกสีน้ำตาลกระโดดข้ามสุนัขขี้เกียจ ขณะที่เด็กๆ เล่นในสวน', [["th", 0.9999999948427641]]],
    ['el', 'Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλικο σκύλο ενώ τα παιδιά παίζουν.', [["el", 0.99999993201837]]],
    ['he', 'השועל החום המהיר קופץ מעל הכלב העצלן בזמן שהילדים משחקים בגן.', [["he", 0.9999989440266153]]],
    ['tr', 'Hızlı kahverengi tilki, çocuklar bahçede oynarken tembel köpeğin üzerinden atlıyor.', [["tr", 0.9999955628020271]]],
    ['pl', 'Szybki brązowy lis przeskakuje nad leniwym psem, podczas gdy dzieci bawią się w ogrodzie.', [["pl", 0.9999978234894786]]],
    ['ro', 'Vulpea maro rapidă sare peste câinele leneș în timp ce copiii se joacă în grădină. Ţară şi țară și.', [["ro", 0.9999999773875061]]],
    ['ca', 'La guineu marró ràpida salta per sobre del gos mandrós mentre els nens juguen al jardí.', [["ca", 0.9999958499397527]]],
    ['cy', 'Mae\'r llwynog brown cyflym yn neidio dros y ci diog tra bod y plant yn chwarae yn yr ardd.', [["cy", 0.9999982699888497]]],
    ['bn', 'দ্রুত বাদামী শিয়াল অলস কুকুরের উপর দিয়ে লাফ দেয় যখন শিশুরা বাগানে খেলে।', [["bn", 0.9999999960370548]]],
    ['ta', 'விரைவான பழுப்பு நரி சோம்பேறி நாயின் மேல் குதிக்கிறது.', [["ta", 0.9999999996300121]]],
    ['uk', 'Швидка коричнева лисиця стрибає через ледачого собаку, поки діти граються в саду.', [["uk", 0.9999971676294481]]],
    ['sw', 'Mbweha mwepesi wa kahawia anaruka juu ya mbwa mvivu wakati watoto wanacheza bustanini.', [["sw", 0.9999988086190105]]],
    ['misc', 'URL http://example.com/a?b=c and mail john.doe@example.org ALL CAPS WORDS HERE 12345 !!! ... « » ° — “quoted” ‘x’ ① Ⅻ ＡＢＣ ｶﾀｶﾅ ㄅㄆㄇ ẠẢẤ ɐɔ ǅ 𝐀𝐁𝐂 😀 日本 한국', [["vi", 0.5714280391615238], ["en", 0.4285704847618109]]],
  ])('%s', (_label, text, expected) => {
    expect(detector.getProbabilities(text).map((l) => [l.lang, l.prob])).toEqual(expected);
    expect(detector.detect(text)).toBe(expected[0]?.[0]);
  });

  it.each<[string, Array<[string, number]>]>([
    ['ABC DEF', [['de', 0.9999918209285441]]],
    ['x', [['so', 0.9999996971461435]]],
  ])('short text %j', (text, expected) => {
    expect(detector.getProbabilities(text).map((l) => [l.lang, l.prob])).toEqual(expected);
  });

  // Boundaries of cleaning_text, the URL/e-mail filters, the 10000-character cap and the 0.1 threshold.
  it.each<[string, string, Array<[string, number]>]>([
    ['latin count includes A (2 Latin vs 4 non-Latin keeps Latin)', 'Ab прив', [['bg', 0.9999927763380406]]],
    ['latin count includes z', 'yz прив', [['mk', 0.9909553542730758]]],
    ['U+0300 counts as non-Latin', 'ab прив \u0300', [['bg', 0.999995548248681]]],
    ['U+02FF counts as neither', 'ab прив \u02ff', [['bg', 0.99999372081415]]],
    ['Latin Extended Additional counts as non-Latin', 'ab ẠẠẠẠẠ', [['vi', 0.9999999999999998]]],
    ['A is dropped from non-Latin text', 'Привет мир A', [['bg', 0.9999923068865866]]],
    ['URL with ~', 'Voir http://example.com/~user/page pour les détails', [['fr', 0.9999987593653901]]],
    ['every URL is removed', 'see http://a.com/x and https://b.org/yy now', [['en', 0.9999961028172235]]],
    ['URL is cut after 2076 characters', `http://${'q'.repeat(2072)}hello world`, [['en', 0.5714257638216416], ['pl', 0.2857129145086053], ['cy', 0.14285729124921134]]],
    ['e-mail local part is cut after 64 characters', `bonjour${'x'.repeat(64)}@example.com merci`, [['sq', 0.8571410184849879], ['fr', 0.1428571226841575]]],
    ['every e-mail is removed', 'contact a.b@c.org or d.e@f.net today', [['en', 0.7142846836966827], ['es', 0.285715315546935]]],
    ['URLs are removed before e-mails', 'see http://user@host.example.org/path now', [['en', 0.9999965613538353]]],
    ['a single feature', 'ь', [['uk', 0.9999957692760152]]],
    ['uniform start probabilities', 'dia', [['id', 0.6035576750939303], ['it', 0.3964423249060696]]],
    ['a language just under 0.1 is dropped', 'Ic', [['it', 0.9056244769160904]]],
    ['a language just over 0.1 is kept', 'pv', [['lt', 0.8901367268167019], ['lv', 0.10986327283395354]]],
    // Only "q" is within the first 10000 characters ("q" -> sq, "qu" -> ca, "qué" -> fr).
    ['only the first 10000 characters count', `${'1'.repeat(9998)} qué`, [['sq', 0.9999925168148965]]],
  ])('%s', (_label, text, expected) => {
    expect(detector.getProbabilities(text).map((l) => [l.lang, l.prob])).toEqual(expected);
  });

  it('returns "unknown" when no language passes 0.1 (11 identical profiles)', () => {
    const profile = (name: string) => ({ name, freq: { a: 5, b: 3, ab: 2 }, n_words: [8, 2, 1] });
    const names = Array.from({ length: 11 }, (_, i) => `l${String(i).padStart(2, '0')}`);
    const small = new LanguageDetector({ ...data, profiles: names.map(profile) });
    expect(small.getProbabilities('ab ba')).toEqual([]);
    expect(small.detect('ab ba')).toBe('unknown');
  });

  it('rejects duplicate language profiles', () => {
    const profile = (name: string) => ({ name, freq: { a: 1 }, n_words: [1, 1, 1] });
    expect(() => new LanguageDetector({ ...data, profiles: [profile('xa'), profile('xb'), profile('xa')] })).toThrow(/duplicate language profile xa/);
  });

  it.each([[''], ['   '], ['12345 !!!'], ['http://example.com/x'], ['a@b.co']])('%j has no features', (text) => {
    expect(() => detector.detect(text)).toThrow(LangDetectError);
    expect(() => detector.detect(text)).toThrow('No features in text.');
  });

  it('is deterministic: the same text twice gives the same probabilities', () => {
    const text = 'Ceci est une phrase assez courte.';
    expect(detector.getProbabilities(text)).toEqual(detector.getProbabilities(text));
  });

  it('agrees with Python on all 1082 IFEval prompts and GPT-4 responses, probabilities included', () => {
    const mismatches: string[] = [];
    for (const row of loadGolden()) {
      let got: Array<[string, number]> | string;
      try {
        got = detector.getProbabilities(row.text).map((l): [string, number] => [l.lang, l.prob]);
      } catch (err) {
        got = `LangDetectException: ${(err as Error).message}`;
      }
      if (JSON.stringify(got) !== JSON.stringify(row.lang)) mismatches.push(`${row.id}: ${JSON.stringify(got)} vs ${JSON.stringify(row.lang)}`);
    }
    expect(mismatches).toEqual([]);
  });
});
