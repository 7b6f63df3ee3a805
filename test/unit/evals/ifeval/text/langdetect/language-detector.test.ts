// Expected values come from Python langdetect 1.0.9 (Debian python3-langdetect) with DetectorFactory.seed = 0 and
// profiles loaded in sorted file-name order; probabilities must match to the last bit. To add a case, run
// detect_langs(text) in Python that way and paste [label, text, [[lang, prob], ...]] into the table.
import { beforeAll, describe, expect, it } from 'vitest';

import { loadLangdetectData } from '../../../../../../evals/ifeval/node/load-text-tools.js';
import { LanguageDetector } from '../../../../../../evals/ifeval/text/langdetect/language-detector.js';
import { LangDetectError } from '../../../../../../evals/ifeval/text/text-tools.js';
import { loadGolden } from '../golden/golden.js';

let detector: LanguageDetector;

beforeAll(async () => {
  detector = new LanguageDetector(await loadLangdetectData());
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
